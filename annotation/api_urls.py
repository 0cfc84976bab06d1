from __future__ import annotations

from rest_framework.routers import DefaultRouter

from annotation.api import CampaignViewSet

router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="api-campaign")

urlpatterns = router.urls
