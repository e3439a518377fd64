package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"syscall"
	"unicode/utf8"
)

// Limits on what a scenario file may hold. A scenario comes from anyone who
// can hand arena a path; its texts go into every observation.
const (
	// MaxFileSize is the largest scenario file read.
	MaxFileSize = 4 << 20
	// MaxText is the most characters of any text in a scenario (a
	// description, a name, a component's setting).
	MaxText = 8192
)

// readFile reads a scenario file of at most MaxFileSize bytes, giving up
// when ctx ends. Anything but a regular file (a FIFO, a device such as
// /dev/zero) is refused without waiting for it: opening does not block.
func readFile(ctx context.Context, name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", st.Mode().Type())
	}
	tooBig := fmt.Errorf("the file is larger than the limit of %d bytes", MaxFileSize)
	if st.Size() > MaxFileSize {
		return nil, tooBig
	}
	var data []byte
	r := io.LimitReader(f, MaxFileSize+1)
	buf := make([]byte, 64<<10)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(buf)
		data = append(data, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(data) > MaxFileSize {
		return nil, tooBig
	}
	return data, nil
}

// checkTexts refuses a text longer than MaxText characters anywhere in a
// scenario file's JSON, naming where (in the order of sorted keys).
func checkTexts(file string, data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil // Parse reports it
	}
	var walk func(v any, at string) error
	walk = func(v any, at string) error {
		switch v := v.(type) {
		case string:
			if n := utf8.RuneCountInString(v); n > MaxText {
				return &ValidationError{File: file, Field: at,
					Msg: fmt.Sprintf("a text of %d characters is longer than the limit of %d", n, MaxText)}
			}
		case []any:
			for i, e := range v {
				if err := walk(e, at+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if err := walk(k, at); err != nil {
					return err
				}
				field := k
				if at != "" {
					field = at + "." + k
				}
				if err := walk(v[k], field); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v, "")
}
