"""Human evaluation, one sub-package per domain: campaigns and their uploads, tasking, judging,
the human-judgment analysis, reports, judgment import and the demo campaign (the README's layout
table says what each holds)."""
