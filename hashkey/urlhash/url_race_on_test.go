//go:build race

package urlhash

const raceEnabled = true
