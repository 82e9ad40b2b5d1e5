"""The EmoPrefer shortcut audit: content-blind probes, controls, length control, consensus, judges, report."""
