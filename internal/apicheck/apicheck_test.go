package apicheck

import (
	"encoding/json"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// listed is what `go list -export -json` says of a package.
type listed struct {
	ImportPath string
	Export     string
	Name       string
}

// modulePackages lists the module's packages with their export data.
func modulePackages(t *testing.T) (mod string, pkgs []listed, exports map[string]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	mod = strings.TrimSpace(string(out))
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", mod+"/...")
	cmd.Dir = "../.."
	cmd.Stderr = os.Stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports = map[string]string{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if strings.HasPrefix(p.ImportPath, mod) {
			pkgs = append(pkgs, p)
		}
	}
	return mod, pkgs, exports
}

// isInternal reports whether path is an internal package of the module.
func isInternal(path string) bool {
	return strings.Contains(path, "/internal/") || strings.HasSuffix(path, "/internal")
}

// TestPublicAPINamesNoInternalType checks that no exported declaration of a
// public package of the module (functions, methods, fields, type
// parameters, aliases) names a type from an internal package, so that code
// outside the module can use and implement every public interface.
func TestPublicAPINamesNoInternalType(t *testing.T) {
	_, pkgs, exports := modulePackages(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var problems []string
	for _, p := range pkgs {
		if isInternal(p.ImportPath) || p.Name == "main" || p.Export == "" {
			continue
		}
		pkg, err := imp.Import(p.ImportPath)
		if err != nil {
			t.Fatalf("importing %s: %v", p.ImportPath, err)
		}
		c := &checker{pkg: pkg, seen: map[types.Type]bool{}}
		scope := pkg.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			c.object(pkg.Name()+"."+name, obj)
		}
		problems = append(problems, c.problems...)
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

type checker struct {
	pkg      *types.Package
	seen     map[types.Type]bool
	problems []string
}

func (c *checker) report(where string, tn *types.TypeName) {
	c.problems = append(c.problems, fmt.Sprintf("%s names the internal type %s.%s", where, tn.Pkg().Path(), tn.Name()))
}

func (c *checker) object(where string, obj types.Object) {
	switch o := obj.(type) {
	case *types.TypeName:
		if o.IsAlias() {
			c.typ(where, o.Type())
			if named, ok := types.Unalias(o.Type()).(*types.Named); ok {
				c.methods(where, named)
				c.typ(where, named.Underlying())
			}
			return
		}
		if named, ok := o.Type().(*types.Named); ok {
			c.typeParams(where, named.TypeParams())
			c.typ(where, named.Underlying())
			c.methods(where, named)
		}
	case *types.Func:
		c.typ(where, o.Type())
	case *types.Var, *types.Const:
		c.typ(where, o.Type())
	}
}

func (c *checker) methods(where string, named *types.Named) {
	for i := 0; i < named.NumMethods(); i++ {
		m := named.Method(i)
		if m.Exported() {
			c.typ(where+"."+m.Name(), m.Type())
		}
	}
}

func (c *checker) typeParams(where string, tps *types.TypeParamList) {
	for i := 0; i < tps.Len(); i++ {
		c.typ(where, tps.At(i).Constraint())
	}
}

func (c *checker) typ(where string, t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		if tn := t.Obj(); tn.Pkg() != nil && isInternal(tn.Pkg().Path()) {
			c.report(where, tn)
			return
		}
		c.typ(where, types.Unalias(t))
	case *types.Named:
		tn := t.Obj()
		if tn.Pkg() != nil && isInternal(tn.Pkg().Path()) {
			c.report(where, tn)
			return
		}
		args := t.TypeArgs()
		for i := 0; i < args.Len(); i++ {
			c.typ(where, args.At(i))
		}
	case *types.Pointer:
		c.typ(where, t.Elem())
	case *types.Slice:
		c.typ(where, t.Elem())
	case *types.Array:
		c.typ(where, t.Elem())
	case *types.Map:
		c.typ(where, t.Key())
		c.typ(where, t.Elem())
	case *types.Chan:
		c.typ(where, t.Elem())
	case *types.Signature:
		c.typeParams(where, t.TypeParams())
		c.tuple(where, t.Params())
		c.tuple(where, t.Results())
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				c.typ(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for i := 0; i < t.NumEmbeddeds(); i++ {
			c.typ(where, t.EmbeddedType(i))
		}
		for i := 0; i < t.NumExplicitMethods(); i++ {
			// An unexported method seals an interface to its package; it is
			// no part of the exported API.
			if m := t.ExplicitMethod(i); m.Exported() {
				c.typ(where+"."+m.Name(), m.Type())
			}
		}
	case *types.Union:
		for i := 0; i < t.Len(); i++ {
			c.typ(where, t.Term(i).Type())
		}
	}
}

func (c *checker) tuple(where string, tup *types.Tuple) {
	for i := 0; i < tup.Len(); i++ {
		c.typ(where, tup.At(i).Type())
	}
}
