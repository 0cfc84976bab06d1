FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 STATIC_ROOT=/app/staticfiles
WORKDIR /app
COPY pyproject.toml README.md ./
COPY evalsite ./evalsite
COPY evalcore ./evalcore
COPY annotation ./annotation
COPY metrics ./metrics
RUN pip install --no-cache-dir .
COPY . .
# Static files are collected at build time; whitenoise serves them with hashed names.
# The settings refuse a short or published key even for this: a throwaway one, used once.
RUN EVALSITE_ENV=production ALLOWED_HOSTS=build EVALSITE_VAR_DIR=/tmp/build \
    SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" \
    python manage.py collectstatic --noinput
RUN useradd --create-home evalsite && mkdir -p /app/var && chown evalsite /app/var
USER evalsite
# TER's and WER's compiled kernels, compiled once into the image: numba caches them in this
# user's home (site-packages is read-only to it), so no worker compiles them when it starts.
RUN python -m evalcore.scoring.warm
EXPOSE 8000
CMD ["gunicorn", "--config", "python:evalsite.gunicorn_config", "evalsite.wsgi:application", "--bind", "0.0.0.0:8000"]
