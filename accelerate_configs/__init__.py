"""accelerate launch configs (``accelerate launch --config_file <this folder>/<name>.yaml training/<script>.py``),
shipped as package data so a pip-installed omniaudit has them: ``omniaudit launch-files`` lists or copies them."""
