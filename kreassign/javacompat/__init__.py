"""Everything that reproduces the JVM, so that our output is the Apache tool's byte for byte.

Standard library only; it imports nothing of kreassign but :mod:`kreassign.errors`.

* :mod:`.arithmetic`: Java ``int`` / ``long`` overflow.
* :mod:`.hashes`: ``hashCode()`` of ``String``, ``Integer``, Kafka's ``TopicPartition`` and
  ``TopicPartitionReplica``; ``compareTo`` of ``String`` and ``Integer``.
* :mod:`.hashmap`: the one model of ``java.util.HashMap`` / ``HashSet`` layout (iteration order):
  pre-sizing, resizes, tree bins, removal.
* :mod:`.random`: ``java.util.Random`` and ``Collections.shuffle``.
* :mod:`.text`: Java strings (UTF-16 code units) and Java's UTF-8 decoding.
* :mod:`.doubles`: ``Double.toString``.
* :mod:`.jackson_nodes`, :mod:`.jackson_reader`, :mod:`.jackson_writer`: Jackson's JSON tree, its reader
  (with its exact error messages) and its writer.
"""
