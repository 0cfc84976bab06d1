"""The background analysis of a campaign (automatic metrics, significance, the human analysis
and metric–human correlations, computed by the numerical core in ``evalcore``) and the campaign
dashboard that shows it."""
