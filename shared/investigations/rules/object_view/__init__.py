"""What one Kubernetes object's output says, whatever its shape: the readers and the signals behind object_state."""
