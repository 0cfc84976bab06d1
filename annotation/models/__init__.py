"""The annotation app's models, one module per subject: campaigns and their data
(:mod:`.campaigns`), annotation tasks (:mod:`.tasks`), judgments and what the analysis keeps
beside them (:mod:`.judgments`), and the shape job records share (:mod:`.jobs`). Import them
from here."""

from annotation.models.allocation import AllocationState
from annotation.models.campaigns import (
    Campaign,
    Document,
    Reference,
    Run,
    Segment,
    System,
    Translation,
    Upload,
)
from annotation.models.crowd import (
    CODE_PATTERN,
    DEFAULT_PARAMETER,
    PARAMETER_PATTERN,
    WORKER_ID_PATTERN,
    CompletionRule,
    CrowdLink,
    CrowdPlatform,
    CrowdWorker,
)
from annotation.models.documents import (
    DOCUMENT_SCORE_MAX,
    DOCUMENT_SCORE_MIN,
    DocumentJudgment,
    DocumentJudgmentRevision,
)
from annotation.models.jobs import Job
from annotation.models.judgments import (
    AnnotatorDecision,
    AnnotatorPseudonym,
    Judgment,
    JudgmentImport,
    JudgmentImportJob,
    JudgmentRevision,
    JudgmentSpan,
    JudgmentValue,
    pseudonym_code,
)
from annotation.models.tasks import (
    Assignment,
    Invite,
    Item,
    ItemKind,
    ItemOutput,
    ItemOutputCredit,
    ProtocolConfig,
    Task,
    TaskBuild,
)
from annotation.models.tutorial import TutorialAnswer, TutorialItem, TutorialRule, TutorialRun

__all__ = [
    "CODE_PATTERN",
    "DEFAULT_PARAMETER",
    "DOCUMENT_SCORE_MAX",
    "DOCUMENT_SCORE_MIN",
    "PARAMETER_PATTERN",
    "WORKER_ID_PATTERN",
    "AllocationState",
    "AnnotatorDecision",
    "AnnotatorPseudonym",
    "Assignment",
    "Campaign",
    "CompletionRule",
    "CrowdLink",
    "CrowdPlatform",
    "CrowdWorker",
    "Document",
    "DocumentJudgment",
    "DocumentJudgmentRevision",
    "Invite",
    "Item",
    "ItemKind",
    "ItemOutput",
    "ItemOutputCredit",
    "Job",
    "Judgment",
    "JudgmentImport",
    "JudgmentImportJob",
    "JudgmentRevision",
    "JudgmentSpan",
    "JudgmentValue",
    "ProtocolConfig",
    "Reference",
    "Run",
    "Segment",
    "System",
    "Task",
    "TaskBuild",
    "Translation",
    "TutorialAnswer",
    "TutorialItem",
    "TutorialRule",
    "TutorialRun",
    "Upload",
    "pseudonym_code",
]
