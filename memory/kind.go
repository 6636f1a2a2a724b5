package memory

// Kind says what a remembered item is; it rides the record as its word.
type Kind string

// The reference's memory kinds.
const (
	Fact      Kind = "fact"
	Message   Kind = "message"
	Summary   Kind = "summary"
	Entity    Kind = "entity"
	Feedback  Kind = "feedback"
	Procedure Kind = "procedure"
)

// KindOf reads a kind word as the reference does: a word it does not know
// (a newer kind) reads as Fact, so old readers degrade instead of failing.
func KindOf(word string) Kind {
	switch k := Kind(word); k {
	case Message, Summary, Entity, Feedback, Procedure:
		return k
	}
	return Fact
}

// code is the kind's one-byte discriminator in a content id.
func (k Kind) code() byte {
	switch k {
	case Message:
		return 2
	case Summary:
		return 3
	case Entity:
		return 4
	case Feedback:
		return 5
	case Procedure:
		return 6
	}
	return 1
}

// Class is the memory taxonomy a kind belongs to.
type Class string

// The three memory classes.
const (
	// ClassEpisodic memory is what happened: conversation turns.
	ClassEpisodic Class = "episodic"
	// ClassSemantic memory is what is known: facts, summaries, entities, feedback.
	ClassSemantic Class = "semantic"
	// ClassProcedural memory is how things are done: procedures.
	ClassProcedural Class = "procedural"
)

// Class returns the kind's class.
func (k Kind) Class() Class {
	switch k {
	case Message:
		return ClassEpisodic
	case Procedure:
		return ClassProcedural
	}
	return ClassSemantic
}

// Lifetime says how long an item lives and how far recall shares it.
type Lifetime string

// The reference's lifetimes.
const (
	// Session items belong to their conversation: a recall narrowed to a
	// conversation sees only that conversation's session items. The default.
	Session Lifetime = "session"
	// Durable items are shared across conversations: a recall narrowed to any
	// conversation sees them too.
	Durable Lifetime = "durable"
)
