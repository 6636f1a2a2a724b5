package realiggy

// StreamWithin is Stream waiting at most timeout for the deletion.
var StreamWithin = stream
