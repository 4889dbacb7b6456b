"""The Apache actions (--generate, --execute, --verify, --cancel, --list) over a ClusterPort."""
