"""Chat: sessions and their messages (storage, history, the message flow) and the task-only assistant."""
