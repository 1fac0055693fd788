package location

// PageRequest asks for one page of a list. PageSize <= 0 means no limit (the
// default page is everything). An empty ContinuationToken starts at the
// beginning; a token the store cannot decode also restarts at the beginning.
type PageRequest struct {
	PageSize          int
	ContinuationToken string
}

// Page is one page of a list. ContinuationToken is non-empty iff more
// matching items remained after this page when it was read. Tokens are
// opaque.
type Page[T any] struct {
	Items             []T
	ContinuationToken string
}
