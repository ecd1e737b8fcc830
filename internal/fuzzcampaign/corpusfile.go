package fuzzcampaign

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"strconv"
	"strings"
)

// ErrCorpusFile marks a file that is not a valid "go test fuzz v1" corpus
// entry.
var ErrCorpusFile = errors.New("fuzzcampaign: bad corpus file")

// corpusHeader is the first line of a native Go fuzz corpus file.
const corpusHeader = "go test fuzz v1"

// parseCorpusFile decodes a corpus file in the format go test writes under
// testdata/fuzz/FuzzX/ and in its fuzz cache: the header line, then one Go
// conversion expression per fuzz argument ([]byte("…"), string("…"),
// int64(-3), byte('a'), rune('é'), float64(1.5), math.Float64frombits(0x…),
// bool(true), …). Values come back with their Go types ([]byte, string,
// int…uint64, float32, float64, bool).
func parseCorpusFile(b []byte) ([]any, error) {
	lines := strings.Split(string(b), "\n")
	if strings.TrimSuffix(lines[0], "\r") != corpusHeader {
		return nil, fmt.Errorf("%w: first line is not %q", ErrCorpusFile, corpusHeader)
	}
	var vals []any
	for i, line := range lines[1:] {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		v, err := parseCorpusValue(line)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrCorpusFile, i+2, err)
		}
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("%w: no value", ErrCorpusFile)
	}
	return vals, nil
}

func parseCorpusValue(line string) (any, error) {
	expr, err := parser.ParseExpr(line)
	if err != nil {
		return nil, err
	}
	call, ok := expr.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil, fmt.Errorf("%q is not a conversion of one value", line)
	}
	arg := call.Args[0]
	switch fun := call.Fun.(type) {
	case *ast.ArrayType: // []byte("…")
		if id, ok := fun.Elt.(*ast.Ident); !ok || fun.Len != nil || (id.Name != "byte" && id.Name != "uint8") {
			return nil, fmt.Errorf("%q: only []byte slices are fuzz arguments", line)
		}
		s, err := stringLit(arg)
		return []byte(s), err
	case *ast.SelectorExpr: // math.Float64frombits(0x…)
		if x, ok := fun.X.(*ast.Ident); !ok || x.Name != "math" {
			return nil, fmt.Errorf("%q: unknown conversion", line)
		}
		bits, err := intLit(arg, false, 64)
		if err != nil {
			return nil, err
		}
		switch fun.Sel.Name {
		case "Float64frombits":
			return math.Float64frombits(bits), nil
		case "Float32frombits":
			if bits > math.MaxUint32 {
				return nil, fmt.Errorf("%q: bits overflow uint32", line)
			}
			return math.Float32frombits(uint32(bits)), nil
		}
		return nil, fmt.Errorf("%q: unknown conversion", line)
	case *ast.Ident:
		return typedValue(fun.Name, arg, line)
	}
	return nil, fmt.Errorf("%q: unknown conversion", line)
}

func typedValue(typ string, arg ast.Expr, line string) (any, error) {
	switch typ {
	case "string":
		return stringLit(arg)
	case "bool":
		if id, ok := arg.(*ast.Ident); ok && (id.Name == "true" || id.Name == "false") {
			return id.Name == "true", nil
		}
		return nil, fmt.Errorf("%q: bool takes true or false", line)
	case "float32", "float64":
		f, err := floatLit(arg, typ)
		if typ == "float32" {
			return float32(f), err
		}
		return f, err
	case "byte", "rune":
		if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.CHAR {
			r, _, _, err := strconv.UnquoteChar(lit.Value[1:len(lit.Value)-1], '\'')
			if err != nil {
				return nil, fmt.Errorf("%q: %v", line, err)
			}
			if typ == "byte" {
				if r > 255 {
					return nil, fmt.Errorf("%q: not a byte", line)
				}
				return byte(r), nil
			}
			return r, nil
		}
		if typ == "byte" {
			typ = "uint8"
		} else {
			typ = "int32"
		}
	}
	bits := map[string]int{"int": 64, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
		"uint": 64, "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}[typ]
	if bits == 0 {
		return nil, fmt.Errorf("%q: %s is not a fuzz argument type", line, typ)
	}
	signed := !strings.HasPrefix(typ, "u")
	u, err := intLit(arg, signed, bits)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", line, err)
	}
	n := int64(u)
	switch typ {
	case "int":
		return int(n), nil
	case "int8":
		return int8(n), nil
	case "int16":
		return int16(n), nil
	case "int32":
		return int32(n), nil
	case "int64":
		return n, nil
	case "uint":
		return uint(u), nil
	case "uint8":
		return uint8(u), nil
	case "uint16":
		return uint16(u), nil
	case "uint32":
		return uint32(u), nil
	}
	return u, nil
}

func stringLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("want a string literal")
	}
	return strconv.Unquote(lit.Value)
}

// intLit parses an integer literal, possibly negated, into its two's
// complement bits.
func intLit(e ast.Expr, signed bool, bits int) (uint64, error) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, fmt.Errorf("want an integer literal")
	}
	v := lit.Value
	if neg {
		v = "-" + v
	}
	if signed {
		n, err := strconv.ParseInt(v, 0, bits)
		return uint64(n), err
	}
	return strconv.ParseUint(v, 0, bits)
}

func floatLit(e ast.Expr, typ string) (float64, error) {
	neg := false
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.SUB {
		neg, e = true, u.X
	}
	var f float64
	switch x := e.(type) {
	case *ast.Ident: // NaN, Inf as go test writes them
		switch x.Name {
		case "NaN":
			f = math.NaN()
		case "Inf":
			f = math.Inf(1)
		default:
			return 0, fmt.Errorf("%s: want a number", typ)
		}
	case *ast.BasicLit:
		if x.Kind != token.FLOAT && x.Kind != token.INT {
			return 0, fmt.Errorf("%s: want a number", typ)
		}
		var err error
		size := 64
		if typ == "float32" {
			size = 32
		}
		if f, err = strconv.ParseFloat(x.Value, size); err != nil {
			return 0, err
		}
	default:
		return 0, fmt.Errorf("%s: want a number", typ)
	}
	if neg {
		f = -f
	}
	return f, nil
}

// marshalCorpusFile encodes values in the "go test fuzz v1" format;
// parseCorpusFile reads it back. Floats are written as their bits
// (math.Float64frombits), which keeps NaN payloads and -0 exact.
func marshalCorpusFile(vals []any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(corpusHeader + "\n")
	for _, v := range vals {
		lit, err := goLiteral(v)
		if err != nil {
			return nil, err
		}
		b.WriteString(lit + "\n")
	}
	return b.Bytes(), nil
}

// goLiteral is the Go expression of one fuzz argument value.
func goLiteral(v any) (string, error) {
	switch x := v.(type) {
	case []byte:
		return "[]byte(" + strconv.Quote(string(x)) + ")", nil
	case string:
		return "string(" + strconv.Quote(x) + ")", nil
	case bool:
		return fmt.Sprintf("bool(%t)", x), nil
	case float32:
		return fmt.Sprintf("math.Float32frombits(0x%x)", math.Float32bits(x)), nil
	case float64:
		return fmt.Sprintf("math.Float64frombits(0x%x)", math.Float64bits(x)), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("%T(%d)", x, x), nil
	}
	return "", fmt.Errorf("%w: %T is not a fuzz argument type", ErrCorpusFile, v)
}
