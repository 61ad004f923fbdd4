"""Things that run a tool on this machine and write an input for iochar.

- :mod:`iochar.capture.fio`: a fio sweep over transfer sizes on a directory's
  device, the runs of ``iochar calibrate`` (:func:`~iochar.capture.fio.run_fio`);
  its JSON is read by :mod:`iochar.load.bench`.
- :mod:`iochar.capture.walk`: a fast file-system walker that writes a snapshot
  as Parquet, ``iochar snapshot`` (:func:`~iochar.capture.walk.snapshot_dir`);
  the ``snapshot`` loader reads it.

Inputs made without running anything here (bundled fixtures, synthetic
workloads, the demo) are in :mod:`iochar.datasets`.
"""
