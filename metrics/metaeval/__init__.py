"""Meta-evaluation of uploaded metric score files on a campaign's pages and API: an organizer
uploads mt-metrics-eval ``*.sys.score`` files (human and metrics) and gets the table of
:mod:`evalcore.metaeval.systems`, on the page, as CSV and as JSON. Nothing is stored."""
