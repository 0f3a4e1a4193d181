package main

import (
	"bufio"
	"encoding/json"
)

// answers is what the commands that answer input by input share: buffered
// output, an optional JSON encoder on it, and the counts that decide the
// exit status.
type answers struct {
	e      *env
	out    *bufio.Writer
	json   *json.Encoder // nil without --json
	failed int           // inputs that could not be answered
	missed int           // inputs answered "no": absent, no match
	// perLine marks a command whose text output is one line per input: a
	// failed input then prints "error<TAB>INPUT" there too, so that the
	// output stays aligned with the input.
	perLine bool
}

func newAnswers(e *env, asJSON bool) *answers {
	a := &answers{e: e, out: bufio.NewWriterSize(e.stdout, 64<<10)}
	if asJSON {
		a.json = newJSONWriter(a.out)
	}
	return a
}

// fail reports an input that could not be answered: on stderr, and in
// JSON mode as an object with input and error so that lines stay aligned.
func (a *answers) fail(r input, err error) {
	a.failed++
	a.e.inputFailed(r, err)
	switch {
	case a.json != nil:
		a.json.Encode(memberOutput{Input: r.text, Error: err.Error()})
	case a.perLine:
		a.out.WriteString("error\t" + r.text + "\n")
	}
}

// status flushes the output and turns the outcome into the exit status:
// 2 on err or any failed input, else 1 if any input was answered "no",
// else 0.
func (a *answers) status(err error) error {
	if ferr := a.out.Flush(); err == nil {
		err = ferr
	}
	if err == nil && a.failed == 0 && a.missed > 0 {
		return errNotFound
	}
	return outcome(a.failed, err)
}
