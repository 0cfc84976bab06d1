"""Import historical judgments onto a campaign from the command line.

    python manage.py import_judgments <campaign id> judgments.tsv [--format wmt] \
        [--protocol direct_assessment] [--criterion score] [--line-base 1] \
        [--language-pair de-en] [--name "WMT19 de-en"] [--user alice] \
        [--system-map names.txt] [--scores auto] [--dry-run]

    python manage.py import_judgments --create-campaign NAME [--user OWNER] \
        [--source-language en --target-language de] [--batches batches.json] judgments.tsv

creates the campaign NAME from a release whose file carries its texts (Google's MQM TSV) or
names companion files that do (``--batches``), imports the judgments onto it in the same
transaction and prints the new campaign's id on the last line.

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
from annotation.judgment_import.release import campaign_from_release, release_format_keys
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
    help = (
        "Import past judgments (EvalSite table, Appraise CSV export, WMT DA, Google's MQM TSV) "
        "onto a campaign, or create the campaign from the release (--create-campaign)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "targets",
            nargs="+",
            metavar="CAMPAIGN FILE | FILE",
            help="The campaign's id (UUID) and the judgments file; with --create-campaign, "
            "the judgments file only.",
        )
        parser.add_argument(
            "--create-campaign",
            metavar="NAME",
            default="",
            help="Create a campaign of this name from the release's texts and import onto it "
            f"(formats: {', '.join(release_format_keys())}).",
        )
        parser.add_argument("--source-language", default="", help="With --create-campaign.")
        parser.add_argument("--target-language", default="", help="With --create-campaign.")
        parser.add_argument(
            "--batches",
            type=Path,
            action="append",
            default=[],
            help="With --create-campaign: a file carrying the release's texts (Appraise's "
            "batches); may be repeated.",
        )
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
        parser.add_argument(
            "--user",
            default="",
            help="Username recorded as the importer; with --create-campaign the new campaign's "
            "owner (default: the only superuser).",
        )
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

    def _file(self, path: Path) -> UploadFile:
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if path.stat().st_size > settings.EVALSITE_UPLOAD_MAX_BYTES:
            raise CommandError(
                f"{path}: {path.stat().st_size:,} bytes; the limit is "
                f"{settings.EVALSITE_UPLOAD_MAX_BYTES:,} (EVALSITE_UPLOAD_MAX_BYTES)"
            )
        return UploadFile(name=path.name, content=path.read_bytes())

    def _user(self, username: str) -> Any:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username}")
        return user

    def _owner(self, username: str) -> Any:
        """The given user, else the only superuser (a new campaign needs an owner)."""
        if username:
            return self._user(username)
        superusers = list(get_user_model().objects.filter(is_superuser=True)[:2])
        if len(superusers) != 1:
            raise CommandError(
                "a new campaign needs an owner: give --user USERNAME "
                f"(there are {'no' if not superusers else 'several'} superusers to default to)"
            )
        return superusers[0]

    def _create(self, options: dict[str, Any]) -> None:
        """Create the campaign from the release and print its id on the last line."""
        if options["dry_run"]:
            raise CommandError("--dry-run does not go with --create-campaign")
        owner = self._owner(options["user"])
        files = [self._file(Path(target)) for target in options["targets"]]
        companions = [self._file(path) for path in options["batches"]]
        try:
            record = campaign_from_release(
                owner=owner,
                name=options["create_campaign"],
                files=files,
                companions=companions,
                options=self._import_options(options),
                source_language=options["source_language"],
                target_language=options["target_language"],
                report=self._progress(options["verbosity"]),
            )
        except ValidationError as exc:
            raise CommandError(
                "nothing created: " + "; ".join(exc.messages), returncode=2
            ) from None
        summary = record.summary
        self.stdout.write(
            f"created campaign {record.campaign.name!r} with {summary['judgments']} judgments "
            f"of {len(summary['annotators'])} annotators as protocol {record.config.name!r}"
        )
        self.stdout.write(str(record.campaign_id))

    def _import_options(self, options: dict[str, Any]) -> ImportOptions:
        return ImportOptions(
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

    def handle(self, *args: Any, **options: Any) -> None:
        targets: list[str] = options["targets"]
        if options["create_campaign"]:
            try:
                self._create(options)
            except UploadError as exc:
                raise CommandError(
                    "nothing created:\n" + "\n".join(str(p) for p in exc.problems), returncode=2
                ) from None
            return
        if options["batches"] or len(targets) != 2:
            raise CommandError(
                "give the campaign's id and the judgments file, or --create-campaign NAME and "
                "the judgments file (with --batches for companion files)"
            )
        try:
            campaign = Campaign.objects.get(pk=targets[0])
        except (Campaign.DoesNotExist, ValidationError, ValueError):
            raise CommandError(f"no campaign with id {targets[0]}") from None
        upload = self._file(Path(targets[1]))
        user = self._user(options["user"]) if options["user"] else None
        try:
            import_options = self._import_options(options)
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
