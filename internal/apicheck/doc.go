// Package apicheck holds lint rules that run as tests over the whole module:
// TestPublicAPINamesNoInternalType checks that no exported declaration of a
// public package names a type of an internal package, so that code outside
// the module can use and implement every public interface.
package apicheck
