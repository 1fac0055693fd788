package conformance

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Readable rendering of arguments and results for the random tester's
// reports, and the first difference between two values.

// renderLimit bounds one rendered value.
const renderLimit = 3000

// renderArgs renders call arguments, comma-separated.
func renderArgs(args ...any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = render(a)
	}
	return strings.Join(parts, ", ")
}

// renderOutcome renders a call's result, or its error.
func renderOutcome(res any, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	if res == nil {
		return "(nothing)"
	}
	return render(res)
}

// render renders a value compactly: pointers followed, zero struct fields
// left out, times in RFC 3339 with milliseconds, bytes as text when they
// read as text.
func render(v any) string {
	var b strings.Builder
	renderValue(&b, reflect.ValueOf(v))
	s := b.String()
	if len(s) > renderLimit {
		s = s[:renderLimit] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

func renderValue(b *strings.Builder, v reflect.Value) {
	if !v.IsValid() {
		b.WriteString("nil")
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		if v.Kind() == reflect.Pointer {
			b.WriteByte('&')
		}
		renderValue(b, v.Elem())
	case reflect.Struct:
		if v.Type() == timeType() {
			b.WriteString(fmtTime(v.Interface().(time.Time)))
			return
		}
		b.WriteString(v.Type().Name())
		b.WriteByte('{')
		first := true
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() || f.IsZero() {
				continue
			}
			if !first {
				b.WriteString(" ")
			}
			first = false
			b.WriteString(v.Type().Field(i).Name)
			b.WriteByte(':')
			renderValue(b, f)
		}
		b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b.WriteString("[]")
			return
		}
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			renderBytes(b, v.Bytes())
			return
		}
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			renderValue(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i].Interface()) < fmt.Sprint(keys[j].Interface()) })
		b.WriteString("map[")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" ")
			}
			renderValue(b, k)
			b.WriteByte(':')
			renderValue(b, v.MapIndex(k))
		}
		b.WriteByte(']')
	case reflect.String:
		fmt.Fprintf(b, "%q", v.String())
	default:
		if v.CanInterface() {
			fmt.Fprintf(b, "%v", v.Interface())
		} else {
			b.WriteString(v.String())
		}
	}
}

// renderBytes renders a byte slice as quoted text when it is short UTF-8,
// else as its size and a hex prefix.
func renderBytes(b *strings.Builder, p []byte) {
	if len(p) <= 64 && utf8.Valid(p) {
		fmt.Fprintf(b, "b%q", p)
		return
	}
	n := min(len(p), 16)
	fmt.Fprintf(b, "<%d bytes %s…>", len(p), hex.EncodeToString(p[:n]))
}

// firstDiff returns the path and both sides of the first difference between
// two normalised values, or ok = false when they are equal.
func firstDiff(path string, a, b reflect.Value) (where, av, bv string, ok bool) {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return path, renderOf(a), renderOf(b), true
		}
		return "", "", "", false
	}
	if a.Type() != b.Type() {
		return path, renderOf(a), renderOf(b), true
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path, renderOf(a), renderOf(b), true
			}
			return "", "", "", false
		}
		return firstDiff(path, a.Elem(), b.Elem())
	case reflect.Struct:
		if a.Type() == timeType() {
			if !a.Interface().(time.Time).Equal(b.Interface().(time.Time)) {
				return path, renderOf(a), renderOf(b), true
			}
			return "", "", "", false
		}
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if w, x, y, d := firstDiff(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d {
				return w, x, y, true
			}
		}
		return "", "", "", false
	case reflect.Slice, reflect.Array:
		if a.Kind() == reflect.Slice && a.Type().Elem().Kind() == reflect.Uint8 {
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				return path, renderOf(a), renderOf(b), true
			}
			return "", "", "", false
		}
		if a.Len() != b.Len() {
			return path + " (length)", fmt.Sprintf("%d items %s", a.Len(), renderOf(a)), fmt.Sprintf("%d items %s", b.Len(), renderOf(b)), true
		}
		for i := 0; i < a.Len(); i++ {
			if w, x, y, d := firstDiff(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d {
				return w, x, y, true
			}
		}
		return "", "", "", false
	case reflect.Map:
		if a.Len() != b.Len() {
			return path + " (size)", renderOf(a), renderOf(b), true
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]", path, k.Interface()), renderOf(a.MapIndex(k)), "absent", true
			}
			if w, x, y, d := firstDiff(fmt.Sprintf("%s[%v]", path, k.Interface()), a.MapIndex(k), bv); d {
				return w, x, y, true
			}
		}
		return "", "", "", false
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path, renderOf(a), renderOf(b), true
		}
		return "", "", "", false
	}
}

// renderOf renders a reflect value.
func renderOf(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	var b strings.Builder
	renderValue(&b, v)
	return b.String()
}
