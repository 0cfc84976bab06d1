"""Import historical judgments onto a campaign from the command line.

    python manage.py import_judgments <campaign id> judgments.tsv [--format wmt] \
        [--protocol direct_assessment] [--criterion score] [--line-base 1] \
        [--language-pair de-en] [--name "WMT19 de-en"] [--user alice] \
        [--system-map names.txt] [--scores auto] [--dry-run]

While it imports, a progress bar shows each step with the time since the start (``-v 0``
hides it). The file formats are documented in docs/reports.md. Exit status 2 with one line per
problem (file and line) when the file cannot be imported; nothing is stored then.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.campaigns.uploads import UploadError, UploadFile
from annotation.judgment_import.formats import FORMAT_AUTO, FORMATS, system_map_parse
from annotation.judgment_import.plan import ImportOptions
from annotation.judgment_import.services import judgments_import, judgments_preview
from annotation.judgment_import.standardised import SCORE_KINDS, SCORES_AUTO, scores_text
from annotation.judgment_import.wmt_segments import (
    NUMBERING_AUTO,
    SEGMENT_NUMBERINGS,
    segment_numbering_text,
)
from annotation.models import Campaign
from annotation.protocols import PROTOCOLS


class Command(BaseCommand):
    help = "Import past judgments (EvalSite table, Appraise CSV export, WMT DA) onto a campaign."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("campaign", help="The campaign's id (UUID).")
        parser.add_argument("file", type=Path, help="The judgments file.")
        parser.add_argument("--format", choices=[FORMAT_AUTO, *FORMATS], default=FORMAT_AUTO)
        parser.add_argument("--protocol", choices=list(PROTOCOLS), default="direct_assessment")
        parser.add_argument("--criterion", default="", help="For rows without a criterion.")
        parser.add_argument("--line-base", type=int, choices=[0, 1], default=1)
        parser.add_argument(
            "--segment-numbering",
            choices=list(SEGMENT_NUMBERINGS),
            default=NUMBERING_AUTO,
            help="What a WMT DA sid counts: upload (line in the test set as uploaded), sorted "
            "(position after sorting the documents by id, as WMT21's DA), auto (the one the "
            "file's documents single out; refused otherwise).",
        )
        parser.add_argument(
            "--scores",
            choices=list(SCORE_KINDS),
            default=SCORES_AUTO,
            help="raw (checked against the scale), standardised (z-scores taken as given, as "
            "WMT's *-good-stnd.csv) or auto (standardised when the scores leave the scale and "
            "look like z-scores).",
        )
        parser.add_argument("--language-pair", default="", help="Keep one pair, e.g. de-en.")
        parser.add_argument("--name", default="", help="Name of the imported protocol.")
        parser.add_argument("--user", default="", help="Username recorded as the importer.")
        parser.add_argument(
            "--system-map",
            type=Path,
            help="A file of 'name in the file = name in the campaign' lines, for system names "
            "that differ (WMT's HuaweiTSC.5 for HuaweiTSC).",
        )
        parser.add_argument(
            "--document-score",
            action="store_true",
            help="Document screens with a document-level score: whole-document rows (Appraise) "
            "become document judgments.",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="Check the file and print how its system names map; store nothing.",
        )

    def _system_map(self, path: Path | None) -> dict[str, str]:
        if path is None:
            return {}
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        return system_map_parse(path.read_text(encoding="utf-8"), file=path.name)

    def _preview(self, campaign: Campaign, upload: UploadFile, options: ImportOptions) -> None:
        preview = judgments_preview(campaign=campaign, upload=upload, options=options)
        self.stdout.write(
            f"{upload.name} ({preview.file_format}): {preview.rows:,} rows, "
            f"{preview.judgments:,} judgments by {preview.annotators} annotators, "
            f"{preview.document_judgments:,} document scores. Nothing stored."
        )
        for name, mapped, n in preview.systems:
            arrow = f"{name} -> {mapped}" if name != mapped else name
            self.stdout.write(f"  {arrow}: {n:,} rows")
        self.stdout.write("Checks of alignment:")
        for check in preview.checks:
            self.stdout.write(f"  - {check}")
        for sample in preview.samples:
            self.stdout.write(f"{sample.segment} (annotator {sample.annotator}): {sample.source}")
            for output in sample.outputs:
                values = ", ".join(f"{k} {v:g}" for k, v in output.values.items())
                self.stdout.write(f"  {output.system}: {output.text} [{values}]")
                for text, severity, category in output.spans:
                    self.stdout.write(f"    {text!r} {severity} {category}".rstrip())

    def _progress(self, verbosity: int) -> Any:
        """A report of the import's steps that prints a bar per step, or None for ``-v 0``."""
        if verbosity < 1:
            return None
        started = time.monotonic()

        def report(stage: str, step: int, steps: int) -> None:
            width = 20
            filled = width * (step - 1) // steps
            bar = "#" * filled + "-" * (width - filled)
            self.stdout.write(
                f"[{bar}] {step}/{steps} {stage} ({time.monotonic() - started:.1f} s)"
            )

        return report

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            campaign = Campaign.objects.get(pk=options["campaign"])
        except (Campaign.DoesNotExist, ValidationError, ValueError):
            raise CommandError(f"no campaign with id {options['campaign']}") from None
        path: Path = options["file"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if path.stat().st_size > settings.EVALSITE_UPLOAD_MAX_BYTES:
            raise CommandError(
                f"{path}: {path.stat().st_size:,} bytes; the limit is "
                f"{settings.EVALSITE_UPLOAD_MAX_BYTES:,} (EVALSITE_UPLOAD_MAX_BYTES)"
            )
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']}")
        upload = UploadFile(name=path.name, content=path.read_bytes())
        try:
            import_options = ImportOptions(
                file_format=options["format"],
                protocol=options["protocol"],
                criterion=options["criterion"],
                line_base=options["line_base"],
                language_pair=options["language_pair"],
                name=options["name"],
                system_map=self._system_map(options["system_map"]),
                document_score=options["document_score"],
                segment_numbering=options["segment_numbering"],
                scores=options["scores"],
            )
            if options["dry_run"]:
                self._preview(campaign, upload, import_options)
                return
            record = judgments_import(
                campaign=campaign,
                upload=upload,
                user=user,
                options=import_options,
                report=self._progress(options["verbosity"]),
            )
        except UploadError as exc:
            raise CommandError(
                "nothing imported:\n" + "\n".join(str(p) for p in exc.problems), returncode=2
            ) from None
        if options["verbosity"] >= 1:
            self.stdout.write(f"[{'#' * 20}] done")
        summary = record.summary
        # The numbering a WMT import applied and standardised scores, on the same last line.
        numbering = " ".join(filter(None, [segment_numbering_text(summary), scores_text(summary)]))
        self.stdout.write(
            f"imported {summary['judgments']} judgments ({summary['values']} values) of "
            f"{len(summary['annotators'])} annotators in {summary['tasks']} tasks"
            f" and {summary.get('document_judgments', 0)} document scores as "
            f"protocol {record.config.name!r} (id {record.config_id})"
            + (f". {numbering}" if numbering else "")
        )
