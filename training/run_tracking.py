"""What a training run tells its tracker (wandb): beside the TrainingArguments and the model config that the
Trainer's own callback logs, the dataset (name, config, omniaudit fingerprint, row filter, held-out fold, mixture
sources) and the model it started from, so a run in the tracker names the data it trained on."""

from __future__ import annotations

import os


def report_setup(training_args, data = None, model_args=None) -> dict:
    """wandb project from the recipe (``env: {WANDB_PROJECT: ...}``); offline mode needs no network. Returns what
    :func:`train_and_save` adds to the tracking run's config beside the TrainingArguments (:func:`run_info`)."""
    if "wandb" in (training_args.report_to or []):
        os.environ.setdefault("WANDB_PROJECT", "omniaudit")
    return run_info(data, model_args)


def run_info(data, model_args=None) -> dict:
    """The run's data and model for its tracking config: ``dataset_name``, ``dataset_config``,
    ``dataset_fingerprint`` (omniaudit's content hash of the config's files, when the dataset is a built one at
    hand), ``dataset_filter``, ``heldout_fold``, the mixture's sources, and ``model_name_or_path``."""
    from omniaudit.data_builders.fingerprint import fingerprint_of

    info: dict = {}
    if data is not None:
        if data.dataset_mixture is not None:
            info["dataset_mixture"] = [{"dataset_name": m.id, "dataset_config": m.config, "weight": m.weight,
                                        "kinds": list(m.kinds) if m.kinds else None,
                                        "dataset_fingerprint": fingerprint_of(m.id, m.config) if m.config else None}
                                       for m in data.dataset_mixture.datasets]
        if data.dataset_name:
            info.update(dataset_name=data.dataset_name, dataset_config=data.dataset_config,
                        dataset_fingerprint=fingerprint_of(data.dataset_name, data.dataset_config)
                        if data.dataset_config else None)
        info.update(dataset_filter=data.dataset_filter, heldout_fold=data.heldout_fold)
    if model_args is not None:
        info["model_name_or_path"] = model_args.model_name_or_path
    return info


def tracking_callback(info: dict):
    """A callback that adds ``info`` to the tracking run's config once the run is open (the Trainer's own wandb
    callback opens it at the start of training and logs only the TrainingArguments and the model config)."""
    from transformers import TrainerCallback

    class RunInfo(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            if "wandb" not in (args.report_to or []) or not state.is_world_process_zero:
                return
            import wandb

            if wandb.run is not None:
                wandb.run.config.update(info, allow_val_change=True)

    return RunInfo()
