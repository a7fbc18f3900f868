from .distiller import Distiller
