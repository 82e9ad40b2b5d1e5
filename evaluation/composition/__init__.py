"""The C3PO composition / counterfactual audit: grading, failure decomposition, attention probes, report."""
