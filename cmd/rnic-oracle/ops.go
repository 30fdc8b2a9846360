package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// An op answers one kind of request. run gets the request's fields other
// than "op" and "id", as a JSON object, and returns a value that encodes as a
// JSON object (a struct), or an error that becomes the response's "error".
type op struct {
	doc string
	run func(params []byte) (any, error)
}

// ops holds every op by name. Each area's file fills it from an init
// function through register, so adding the ops of a new hardware block is a
// new file and nothing else; it is only read once main starts.
var ops = map[string]op{}

// register adds an op; a name registered twice is a programming error.
func register(name, doc string, run func(params []byte) (any, error)) {
	if _, dup := ops[name]; dup {
		panic("rnic-oracle: op registered twice: " + name)
	}
	ops[name] = op{doc: doc, run: run}
}

func opNames() []string {
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func init() {
	register("ops", "the names of all ops: {} -> {ops: [names]}", func(params []byte) (any, error) {
		var p struct{}
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		return struct {
			Ops []string `json:"ops"`
		}{opNames()}, nil
	})
}

// errorReply is the response to a request that failed.
type errorReply struct {
	ID    json.RawMessage `json:"id,omitempty"`
	Error string          `json:"error"`
}

// handle answers one request line with one response line (without the
// newline).
func handle(line []byte) []byte {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil || fields == nil {
		return replyError(nil, errors.New("request is not a JSON object"))
	}
	id := fields["id"]
	delete(fields, "id")
	rawName, ok := fields["op"]
	if !ok {
		return replyError(id, errors.New(`request has no "op"`))
	}
	delete(fields, "op")
	var name string
	if err := json.Unmarshal(rawName, &name); err != nil {
		return replyError(id, errors.New(`"op" must be a string`))
	}
	o, ok := ops[name]
	if !ok {
		return replyError(id, fmt.Errorf("unknown op %q (known: %s)", name, strings.Join(opNames(), ", ")))
	}
	params, err := json.Marshal(fields)
	if err != nil {
		return replyError(id, err)
	}
	result, err := o.run(params)
	if err != nil {
		return replyError(id, fmt.Errorf("%s: %w", name, err))
	}
	body, err := json.Marshal(result)
	if err != nil || len(body) < 2 || body[0] != '{' {
		return replyError(id, fmt.Errorf("%s: result is not a JSON object", name))
	}
	if len(id) == 0 {
		return body
	}
	// Splice the id in front of the result's fields.
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(id)
	if string(body) != "{}" {
		b.WriteByte(',')
	}
	b.Write(body[1:])
	return b.Bytes()
}

func replyError(id json.RawMessage, err error) []byte {
	b, _ := json.Marshal(errorReply{ID: id, Error: err.Error()})
	return b
}

// decodeParams decodes an op's fields into v (a pointer to a struct),
// refusing fields that v does not have: a misspelt field is a testbench bug
// that should not pass for a default.
func decodeParams(params []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			// Field is a Go path that names embedded structs too
			// ("crcStart.state"); the JSON field is its last element.
			field := typeErr.Field[strings.LastIndexByte(typeErr.Field, '.')+1:]
			return fmt.Errorf("field %q: want %s, got JSON %s", field, typeErr.Type, typeErr.Value)
		}
		return err
	}
	return nil
}

// decodeHex decodes the hex string of the named field; a nil s means the
// field was absent, which is an error (every octet field is required).
func decodeHex(name string, s *string) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("missing field %q", name)
	}
	b, err := hex.DecodeString(*s)
	if err != nil {
		return nil, fmt.Errorf("field %q: not a hex string: %v", name, err)
	}
	return b, nil
}
