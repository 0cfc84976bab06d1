"""EvalSite's numerical core: scoring (metrics), resampling and significance, correlation, and
the human-judgment statistics (normalisation, quality control, agreement, rankings).

Pure Python over numpy, scipy and sacreBLEU: it imports neither Django nor Celery nor the apps,
so it can be used, tested and type-checked on its own (``tests/evalcore/test_purity.py``).
"""
