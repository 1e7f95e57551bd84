"""The rewrite engine (one narrow seam around Bowler/fissix) and the helpers rules share."""
