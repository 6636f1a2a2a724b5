package generator_test

import (
	"fmt"

	"github.com/lasergo/laser/gen/internal/generator"
)

// A directive parses into a name and fields with byte offsets into the
// comment, which is how diagnostics point at the exact field.
func ExampleParseDirective() {
	d, errs, ok := generator.ParseDirective(`//laser:agent id=billing listen=agent.commands respond="agent.responses" colour=red`)
	fmt.Println(ok, d.Name)
	for _, f := range d.Fields {
		fmt.Printf("%s=%s at %d\n", f.Key, f.Value, f.KeyOff)
	}
	for _, e := range errs {
		fmt.Printf("%d: %s: %s\n", e.Off, e.Problem.Title, e.Detail)
	}
	// Output:
	// true agent
	// id=billing at 14
	// listen=agent.commands at 25
	// respond=agent.responses at 47
	// 73: unknown key: //laser:agent has no key "colour"
}
