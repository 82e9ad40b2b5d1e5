"""omniaudit: find and remove shortcuts in multimodal judges and omni models.

The toolkit has three jobs, one subpackage each: ``omniaudit.data_builders`` (audit datasets in the Hub layout),
``omniaudit.training`` (SFT / DPO / ODIN reward training scripts) and ``omniaudit.evaluation`` (metrics with
uncertainty, judges, audits and reports).
"""

from omniaudit.errors import InputError

__version__ = "0.1.0"
__all__ = ["InputError", "__version__"]
