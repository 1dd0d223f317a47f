"""Test harness: local emulators, offline hosts and test doubles, all real processes on 127.0.0.1."""
