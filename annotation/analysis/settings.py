"""The settings of a human-judgment analysis: QC test and threshold, normalisation, significance
test, resampling and seed, and which annotators count."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

from annotation.analysis.compat import renamed_keys
from evalcore.human.normalisation import Basis, Space
from evalcore.human.qc import QCSpace, QCTest, RankSpace
from evalcore.human.systems import SignificanceTest

QC_TESTS: tuple[QCTest, ...] = ("paired_t", "wilcoxon", "mannwhitney")

QC_SPACES: tuple[QCSpace, ...] = ("raw", "z")

RANK_SPACES: tuple[RankSpace, ...] = ("rank", "normalised_rank")

BASES: tuple[Basis, ...] = ("real_and_repeat", "all")

# "kind": each protocol kind's own space (Protocol.analysis_space): raw points for ESA and
# MQM, as WMT and Google rank them, z-scores for the others, as WMT ranks direct assessment.
KIND_SPACE: Literal["kind"] = "kind"
SpaceChoice = Literal["kind", "raw", "shifted", "z"]
SPACES: tuple[SpaceChoice, ...] = (KIND_SPACE, "raw", "shifted", "z")

SIGNIFICANCE_TESTS: tuple[SignificanceTest, ...] = (
    "wilcoxon",
    "sign",
    "mannwhitney",
    "bootstrap",
    "ar",
)


DEFAULT_SEED = 12345
"""The seed of a campaign that chose none (sacreBLEU's default seed)."""

RESAMPLES_MIN = 10
RESAMPLES_MAX = 100_000
"""The range of a campaign's resample count (forms and API): enough for a bootstrap interval,
few enough for a worker."""

TRUESKILL_RUNS_MAX = 2_000
"""The most TrueSkill runs for rank ranges (each a full pass over the comparisons)."""


@dataclass(frozen=True)
class AnalysisSettings:
    """What an organizer can choose; every field is reported beside the results.

    Attributes:
        qc_test: the bad-reference test: "paired_t" (default), "wilcoxon" or "mannwhitney"
            (score and ranking criteria alike).
        qc_space: the scores the test runs on: "raw" or "z" (score criteria).
        ranking_qc_space: what the test compares on ranking criteria: the "rank" (default) or
            the "normalised_rank" (r − 1)/(k − 1) on a screen of k outputs.
        threshold: an annotator passes when p ≤ threshold.
        basis: the rows annotator means and SDs come from: "real_and_repeat" or "all".
        idle_cap: the most seconds one screen counts for in time on task.
        include_failed: keep annotators who failed QC in the system scores.
        exclude_untested: leave out annotators the test could not judge (fewer than two
            bad-reference pairs; on rankings, bad references on screens where every output was
            degraded do not count); by default they stay in, flagged "untested".
        space: the score space of system scores, intervals and significance: raw, shifted,
            z, or "kind" (the default): each kind's own (:meth:`space_for`).
        test: pairwise significance between systems (score protocols).
        alpha: significance level of the clusters.
        confidence: level of the t and bootstrap intervals and of the TrueSkill rank ranges.
        resamples: the campaign's one resample count: resamples of the bootstrap intervals
            and of the random tests, here and in the metric analysis.
        trueskill_runs: TrueSkill runs for rank ranges (each is a full pass over the
            comparisons, so fewer than ``resamples`` by default).
        seed: the campaign's one seed: of every random step here and in the metric analysis.
    """

    qc_test: QCTest = "paired_t"
    qc_space: QCSpace = "raw"
    ranking_qc_space: RankSpace = "rank"
    threshold: float = 0.05
    basis: Basis = "real_and_repeat"
    idle_cap: float = 300.0
    include_failed: bool = False
    exclude_untested: bool = False
    space: SpaceChoice = KIND_SPACE
    test: SignificanceTest = "wilcoxon"
    alpha: float = 0.05
    confidence: float = 0.95
    resamples: int = 1000
    trueskill_runs: int = 100
    seed: int = DEFAULT_SEED

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnalysisSettings:
        """Settings from :meth:`as_dict` (as a campaign stores them); keys that are not fields
        (of an older or newer version) are ignored, missing ones keep their defaults. The
        old names of the resample counts (:data:`~annotation.analysis.compat.RENAMED`) are read
        under their new names; a ValueError refuses a seed of None (each protocol's own seed,
        which no longer exists)."""
        data = renamed_keys(data)
        if "seed" in data and data["seed"] is None:
            raise ValueError(
                "seed: None (each protocol's own seed) is no longer a setting; a campaign has "
                "one seed"
            )
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def space_for(self, kind_space: Space) -> Space:
        """The space of a criterion whose kind ranks in ``kind_space``: the chosen space, or
        the kind's own when the settings leave it to the kind."""
        if self.space == KIND_SPACE:
            return kind_space
        return self.space

    def with_preset(self, name: str) -> AnalysisSettings:
        """These settings with the conventions of preset ``name`` (:data:`PRESETS`)."""
        return replace(self, **PRESETS[name].values)

    @property
    def preset(self) -> str | None:
        """The key of the first preset whose conventions these settings follow, if any."""
        for key, preset in PRESETS.items():
            if all(getattr(self, k) == v for k, v in preset.values.items()):
                return key
        return None


@dataclass(frozen=True)
class Preset:
    """A named set of conventions: the fields it sets (the others keep their values)."""

    label: str
    values: dict[str, Any]
    description: str = ""


# WMT's human evaluation by direct assessment (Graham et al. 2017; WMT findings 2017–2022):
# each annotator's scores standardised by the mean and SD of all their scores (QC items
# included), Mann–Whitney U (Wilcoxon rank-sum) for the annotators' bad-reference test and
# between systems, and annotators who fail QC still counted (WMT reports them beside the
# results rather than dropping their scores). With it, official WMT system scores and clusters
# are one choice away.
WMT = Preset(
    "WMT",
    {"basis": "all", "qc_test": "mannwhitney", "test": "mannwhitney", "include_failed": True},
    "z over all of an annotator's scores, Mann–Whitney U, failed annotators included",
)
EVALSITE = Preset(
    "EvalSite defaults",
    {
        "basis": AnalysisSettings.basis,
        "qc_test": AnalysisSettings.qc_test,
        "test": AnalysisSettings.test,
        "include_failed": AnalysisSettings.include_failed,
    },
    "z over real and repeat items, paired t QC, Wilcoxon signed-rank, failed annotators out",
)
PRESETS: dict[str, Preset] = {"evalsite": EVALSITE, "wmt": WMT}
