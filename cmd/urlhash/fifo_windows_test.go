package main

import "errors"

// mkfifo fails: Windows has no named pipes in the file system.
func mkfifo(path string) error { return errors.New("no mkfifo on Windows") }
