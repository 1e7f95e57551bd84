"""Reports built only from the run record (``run.json``), so any run can be re-rendered."""
