from .checkpoint_saver import resume_checkpoint, save_checkpoint
from .cuda import ApexScaler, NativeScaler

__all__ = ["ApexScaler", "NativeScaler", "resume_checkpoint", "save_checkpoint"]
