package main

import "fmt"

// Order is a row of the orders table: who bought what, for how much, when
// (milliseconds of event time).
type Order struct {
	ID      int64
	User    string
	Product string
	Amount  int64
	At      int64
}

// User is a row of the users table.
type User struct {
	Name string
	City string
}

// UserStats is a row of the per-user aggregate of the orders.
type UserStats struct {
	User     string
	Total    int64 // SUM(amount)
	Largest  int64 // MAX(amount)
	Products int64 // COUNT(DISTINCT product)
	Big      int64 // COUNT(*) FILTER (WHERE amount >= 10)
}

func (s UserStats) String() string {
	return fmt.Sprintf("%s total=%d largest=%d products=%d big=%d", s.User, s.Total, s.Largest, s.Products, s.Big)
}

// OrderCity is a row of the join of orders and users.
type OrderCity struct {
	Order int64
	User  string
	City  string // "" when the user is unknown
}

func (o OrderCity) String() string { return fmt.Sprintf("order %d %s %q", o.Order, o.User, o.City) }

// Rate is a version of a currency's exchange rate, in cents per unit,
// valid from At on.
type Rate struct {
	Currency string
	Cents    int64
	At       int64
}

// Payment is a row of the payments table: an amount in a currency at a time.
type Payment struct {
	ID       int64
	Currency string
	Amount   int64
	At       int64
}

// Priced is a payment converted at the rate valid at its time.
type Priced struct {
	Payment int64
	Cents   int64 // -1 when no rate was valid
}

func (p Priced) String() string { return fmt.Sprintf("payment %d = %d cents", p.Payment, p.Cents) }

// Customer is a row of an external table looked up by name.
type Customer struct {
	Name    string
	Segment string
}

// Sale is a row of the sales table of the ranking sections.
type Sale struct {
	Category string
	Product  string
	Amount   int64
}

// Profile is a row of an upsert stream of user profiles keyed by Name.
type Profile struct {
	Name string
	City string
}
