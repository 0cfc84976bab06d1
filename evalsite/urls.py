"""Top-level URLs: pages, the REST API with its schema and docs, the admin, login and logout."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from evalsite import ratelimit, views

# The admin's login counts failures like the site's (see evalsite/ratelimit.py).
admin.site.login_form = ratelimit.RateLimitedAdminAuthenticationForm

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("login/", ratelimit.login, name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/login/", ratelimit.too_many_requests(admin.site.login)),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # Swagger UI with its start-up script served by the same view (?script), not inline, and
    # the page's rules from static/css/api_docs.css: the Content-Security-Policy allows neither.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api_schema", template_name="api/docs.html"),
        name="api_docs",
    ),
    path("api/", include("annotation.api_urls")),
    path("api/", include("metrics.api_urls")),
    path("", include("metrics.settings_urls")),
    path("", include("annotation.urls")),
    path("", include("annotation.analysis.urls")),
    path("", include("annotation.reports.urls")),
    path("", include("metrics.urls")),
]

# Errors of addresses no view handles: JSON under /api/, the site's pages elsewhere.
handler400 = "evalsite.views.bad_request"
handler404 = "evalsite.views.page_not_found"
handler500 = "evalsite.views.server_error"
