"""Protocol kinds: what a screen shows and what an answer must contain.

One generic task / item / judgment model serves every kind; a kind is one module of this package
(criteria, scales with their labels, modes, how many outputs a screen shows, validation), and the
registry lists them. Views, templates and the JavaScript read these definitions instead of being
copied per protocol.
"""

from annotation.protocols import adequacy_fluency, direct_assessment, esa, mqm, ranking
from annotation.protocols.adequacy_fluency import ADEQUACY, ADEQUACY_FLUENCY, FLUENCY
from annotation.protocols.base import (
    BILINGUAL,
    MONOLINGUAL,
    PAIRWISE,
    RANK,
    REFERENCE_BASED,
    SCORES,
    SCORES_SETTING,
    SCORES_STANDARDISED,
    SOURCE_BASED,
    AnswerPart,
    Criterion,
    Mode,
    Protocol,
)
from annotation.protocols.direct_assessment import DA_SCORE, DIRECT_ASSESSMENT
from annotation.protocols.esa import ESA, ESA_SCORE
from annotation.protocols.mqm import MQM, MQM_SCORE
from annotation.protocols.ranking import RANKING
from annotation.protocols.registry import PROTOCOLS, answer_parts, protocol_choices, register

# The kinds, in the order forms and pages list them.
KINDS = (adequacy_fluency, ranking, direct_assessment, esa, mqm)
for _kind in KINDS:
    register(_kind.PROTOCOL)
MODE_CHOICES = [(m.key, m.label) for m in (BILINGUAL, MONOLINGUAL, SOURCE_BASED, REFERENCE_BASED)]

__all__ = [
    "ADEQUACY",
    "ADEQUACY_FLUENCY",
    "BILINGUAL",
    "DA_SCORE",
    "DIRECT_ASSESSMENT",
    "ESA",
    "ESA_SCORE",
    "FLUENCY",
    "KINDS",
    "MODE_CHOICES",
    "MONOLINGUAL",
    "MQM",
    "MQM_SCORE",
    "PAIRWISE",
    "PROTOCOLS",
    "RANK",
    "RANKING",
    "REFERENCE_BASED",
    "SCORES",
    "SCORES_SETTING",
    "SCORES_STANDARDISED",
    "SOURCE_BASED",
    "AnswerPart",
    "Criterion",
    "Mode",
    "Protocol",
    "answer_parts",
    "protocol_choices",
    "register",
]
