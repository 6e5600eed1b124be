"""Portfolios (issue 27): plan a quarter of jobs and serving on owned, bought and rented GPUs in one MILP."""
