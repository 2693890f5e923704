"""The one write path between the use cases and the pass: the lock, the remote round, the pass, the commits as
the actor, the record of runs and the recall index kept current. The only importer of ``engine/``."""
