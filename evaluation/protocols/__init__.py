"""The audio-judge protocol audit: RF, position lock, cue conflict, judge modes, runs, report."""
