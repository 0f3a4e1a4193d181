package main

// otherProfile resolves the profiles that live outside hashkey's url-hash
// identity. It reports ok=false for an unknown name.
func (o *identityFlags) otherProfile() (*canonicaliser, bool, error) {
	return nil, false, nil
}
