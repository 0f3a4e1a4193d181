//go:build race

package keytable

// raceEnabled: the race detector drops sync.Pool items at random.
const raceEnabled = true
