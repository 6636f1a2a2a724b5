package runtime_test

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/lasergo/laser/runtime"
)

// maxGoDocLines bounds `go doc -short` of this package: the surface a
// newcomer reads first (issue 39 asked for at most 80).
const maxGoDocLines = 79

// goDoc runs the go tool's doc command on this package, skipping the test
// where the go tool is absent.
func goDoc(t *testing.T, args ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH")
	}
	out, err := exec.CommandContext(t.Context(), goTool, append([]string{"doc"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go doc %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

func TestGoDocShortStaysShort(t *testing.T) {
	lines := strings.Split(strings.TrimRight(goDoc(t, "-short", "."), "\n"), "\n")
	if len(lines) > maxGoDocLines {
		t.Fatalf("go doc -short lists %d lines, more than %d: group constants and variables into blocks, "+
			"or make a helper a method, before adding to the package surface:\n%s", len(lines), maxGoDocLines, strings.Join(lines, "\n"))
	}
}

func TestGoDocLabelsTheGeneratedCodeSupport(t *testing.T) {
	doc := goDoc(t, ".")
	i := strings.Index(doc, "# Support for generated code")
	if i < 0 {
		t.Fatal("the package doc has no heading for the generated-code support")
	}
	section := doc[i:]
	for _, name := range []string{"IsAtLeastVersion0_1", "Message.DecodeInput", "Ctx.FailRequest", "Ctx.RejectUnknownOperation", "OpenTypedStream", "Stream.Finish"} {
		if !strings.Contains(section, name) {
			t.Errorf("the generated-code section does not name %s", name)
		}
		sym := goDoc(t, ".", name)
		if !strings.Contains(sym, "for generated code") {
			t.Errorf("the doc comment of %s does not say it is for generated code:\n%s", name, sym)
		}
	}
}

// TestMiddlewareHooksEmbedMiddleware: every optional hook interface embeds
// Middleware, so only a Middleware can implement one and each is accepted
// where a Middleware is expected.
func TestMiddlewareHooksEmbedMiddleware(t *testing.T) {
	mw := reflect.TypeFor[runtime.Middleware]()
	for _, hook := range []reflect.Type{
		reflect.TypeFor[runtime.Interceptor](),
		reflect.TypeFor[runtime.ConsumerObserver](),
		reflect.TypeFor[runtime.SendInterceptor](),
		reflect.TypeFor[runtime.RequestInterceptor](),
	} {
		if !hook.Implements(mw) {
			t.Errorf("%s does not embed runtime.Middleware", hook)
		}
	}
}
