from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_organizers_group(sender: AppConfig, **kwargs: Any) -> None:
    from annotation.campaigns.services import organizers_group_ensure

    organizers_group_ensure(using=kwargs.get("using", "default"))


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        # Register the app's Celery tasks in every process: services send them by name.
        import annotation.tasks  # noqa: F401
        from annotation.crowd.entrance import CrowdEntrance
        from annotation.judging.entrances import entrance_register
        from annotation.judging.gates import gate_register
        from annotation.tutorial.runs import TutorialGate

        # The annotator's pages ask the tutorial before a protocol's real items, and follow a
        # crowd link's rules; both build on the annotation screen, so the screen's package
        # knows them only as a registered gate and entrance.
        gate_register(TutorialGate())
        entrance_register(CrowdEntrance())

        # After every migrate (permissions exist by then), the Organizers group exists with the
        # permission that makes a user an organizer.
        post_migrate.connect(_ensure_organizers_group, sender=self)
