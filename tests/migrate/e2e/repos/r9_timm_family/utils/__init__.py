from .checkpoint_saver import resume_checkpoint, save_checkpoint
from .cuda import ApexScaler, NativeScaler
