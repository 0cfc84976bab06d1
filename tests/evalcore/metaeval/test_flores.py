"""The WMT21 Flores release end to end: its published human system scores against the COMET
scores it ships, every system read, every name matched (as the release's own name list pairs
them), the correlations scipy's on the same vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from evalcore.metaeval.scorefiles import (
    match_system_names,
    read_sys_scores,
    read_wmt_ad_sys_scores,
    rename_systems,
)
from evalcore.metaeval.systems import meta_evaluate_systems
from tests.support.shared_data import shared_data_or_skip

DATA: Path = shared_data_or_skip("wmt21-flores-da")
PAIRS = ("bn-hi", "hi-bn", "xh-zu", "zu-xh")


def _files(pair: str) -> tuple[Path, Path]:
    return (
        DATA / "humaneval" / f"ad-sys-scores-{pair}.csv",
        DATA / "scores" / f"COMET_florestest2021.{pair}.ref-A.tsv",
    )


@pytest.mark.parametrize("pair", PAIRS)
def test_every_system_is_read_and_matched_as_the_release_names_them(pair):
    human_file, comet_file = _files(pair)
    human = read_wmt_ad_sys_scores(human_file)
    comet = read_sys_scores(comet_file)
    rows = [line for line in human_file.read_text().splitlines()[1:] if line.strip()]
    assert len(human) == len(rows)
    assert len(comet) == len([line for line in comet_file.read_text().splitlines() if line])
    match = match_system_names(human, comet)
    assert match.human_only == ()
    assert match.metric_only == ()
    # ad-sys-ranking-<pair>-z-names.csv: the release's own "<submission> <name>" pairs.
    names = DATA / "humaneval" / f"ad-sys-ranking-{pair}-z-names.csv"
    published = dict(line.split()[4:6] for line in names.read_text().splitlines())
    assert match.pairs == published


@pytest.mark.parametrize("pair", PAIRS)
def test_comets_correlations_are_scipys_on_the_published_z_scores(pair):
    human_file, comet_file = _files(pair)
    comet = read_sys_scores(comet_file)
    raw = read_wmt_ad_sys_scores(human_file)
    human = rename_systems(raw, match_system_names(raw, comet).pairs)
    table = meta_evaluate_systems(human=human, metrics={"COMET": comet}, n_trials=0)
    h = np.array([human[s] for s in table.systems])
    m = np.array([comet[s] for s in table.systems])
    row = table.rows[0]
    assert row.n_systems == len(raw)
    assert row.pearson == pytest.approx(sps.pearsonr(h, m).statistic, abs=1e-12)
    assert row.spearman == pytest.approx(sps.spearmanr(h, m).statistic, abs=1e-12)
    assert row.kendall == pytest.approx(sps.kendalltau(h, m).statistic, abs=1e-12)


@pytest.mark.parametrize(("pair", "outlier"), [("hi-bn", "Online-G"), ("zu-xh", "Online-G")])
def test_without_the_outlier_comets_pearson_is_scipys_on_the_rest(pair, outlier):
    human_file, comet_file = _files(pair)
    comet = read_sys_scores(comet_file)
    raw = read_wmt_ad_sys_scores(human_file)
    human = rename_systems(raw, match_system_names(raw, comet).pairs)
    table = meta_evaluate_systems(
        human=human, metrics={"COMET": comet}, exclude_outliers=True, n_trials=0
    )
    assert table.excluded_outliers == (outlier,)
    rest = [s for s in human if s != outlier]
    assert sorted(table.systems) == sorted(rest)
    assert table.rows[0].pearson == pytest.approx(
        sps.pearsonr([human[s] for s in rest], [comet[s] for s in rest]).statistic, abs=1e-12
    )
