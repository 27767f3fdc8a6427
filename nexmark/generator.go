package nexmark

import (
	"fmt"
	"math"
)

// Generator produces one part of the Nexmark event sequence. It is not safe
// for concurrent use; run one Generator per goroutine, each for its own part.
type Generator struct {
	cfg Config
	t   *tables

	part, parts int
	// firstID is the event id offset of this part (the reference's
	// subFirstEventId) and firstNum the event number of its first event.
	firstID, firstNum int64
	// n is the number of events in this part and pos the number emitted.
	n, pos int64

	total, pp, ap int64
	ooo           int64
	delayUs       float64
	// auctionSpan is the number of events over which NumInFlightAuctions
	// auctions are generated; it sets the average auction length.
	auctionSpan int64
	// bidderOffset is what is added to a base-0 bidder id.
	bidderOffset int64

	hotAuctionRatio, hotBiddersRatio, hotSellersRatio uint64
	inFlight, activePeople                            int64

	// Padding of bids is the same for every bid: bidExtraMin + [0, span).
	bidExtraMin  int
	bidExtraSpan uint64

	arena arena

	// skip holds a bit per EventType whose events are left out: fill sets
	// their Type and time only (see SourceOptions.eventTypes).
	skip uint8
}

// NewGenerator returns a generator of part part (0-based) of parts parallel
// parts of the sequence described by cfg. As in the reference's
// GeneratorConfig.split, part i generates a contiguous range of
// MaxEvents/parts event ids (the last part also takes the remainder) and every
// part starts at event number cfg.FirstEventNumber, so the parts run on
// parallel event-time timelines. Set cfg.NumEventGenerators to parts (or 0)
// to keep the configured event rate over all parts, as the reference does.
func NewGenerator(cfg Config, part, parts int) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if parts < 1 {
		return nil, fmt.Errorf("nexmark: parts is %d; set it to the number of parallel generators (at least 1)", parts)
	}
	if part < 0 || part >= parts {
		return nil, fmt.Errorf("nexmark: part is %d; it must be in [0, %d) for parts=%d", part, parts, parts)
	}
	total := cfg.maxEvents()
	sub := total / int64(parts)
	n := sub
	if part == parts-1 {
		n = total - sub*int64(parts-1)
	}
	numGen := cfg.NumEventGenerators
	if numGen == 0 {
		numGen = parts
	}
	g := &Generator{
		cfg:             cfg,
		t:               getTables(),
		part:            part,
		parts:           parts,
		firstID:         cfg.FirstEventID + sub*int64(part),
		firstNum:        cfg.FirstEventNumber,
		n:               n,
		total:           cfg.totalProportion(),
		pp:              int64(cfg.PersonProportion),
		ap:              int64(cfg.AuctionProportion),
		ooo:             cfg.OutOfOrderGroupSize,
		delayUs:         1e6 / float64(cfg.FirstEventRate) * float64(numGen),
		hotAuctionRatio: uint64(cfg.HotAuctionRatio),
		hotBiddersRatio: uint64(cfg.HotBiddersRatio),
		hotSellersRatio: uint64(cfg.HotSellersRatio),
		inFlight:        int64(cfg.NumInFlightAuctions),
		activePeople:    int64(cfg.NumActivePeople),
		bidderOffset:    FirstPersonID,
	}
	g.auctionSpan = g.inFlight * g.total / g.ap
	if cfg.BidderDoubleOffset {
		g.bidderOffset += FirstPersonID
	}
	g.bidExtraMin, g.bidExtraSpan = extraRange(bidFixedSize, cfg.AvgBidByteSize)
	return g, nil
}

// Config returns the configuration the generator was created with.
func (g *Generator) Config() Config { return g.cfg }

// Len returns the number of events in this part.
func (g *Generator) Len() int64 { return g.n }

// Position returns the number of events this part has emitted. Passing it to
// SetPosition on a generator with the same Config, part and parts resumes
// the exact same sequence, which is how a source checkpoints.
func (g *Generator) Position() int64 { return g.pos }

// SetPosition sets the number of events already emitted to pos, so that the
// next event is the one that follows pos events. It costs nothing: every
// event is computed from its position alone. It fails if pos is outside
// [0, Len()].
func (g *Generator) SetPosition(pos int64) error {
	if pos < 0 || pos > g.n {
		return fmt.Errorf("nexmark: SetPosition(%d): position must be in [0, %d] for part %d of %d", pos, g.n, g.part, g.parts)
	}
	g.pos = pos
	return nil
}

// Next fills e with the next event and returns true, or returns false without
// touching e when the part is exhausted. It does not allocate, except for a
// new block of person strings once every few hundred persons.
func (g *Generator) Next(e *Event) bool {
	if g.pos >= g.n {
		return false
	}
	g.fill(e, g.pos)
	g.pos++
	return true
}

// NextBatch fills dst with the next events and returns how many it filled:
// len(dst), or fewer when the part runs out (0 once it is exhausted).
func (g *Generator) NextBatch(dst []Event) int {
	k := min(int64(len(dst)), g.n-g.pos)
	if k <= 0 {
		return 0
	}
	dst = dst[:k]
	pos := g.pos
	for i := range dst {
		g.fill(&dst[i], pos+int64(i))
	}
	g.pos += k
	return int(k)
}

// eventNumber returns the event number, adjusted for out-of-order groups,
// of the event emitted at position pos (the reference's
// nextAdjustedEventNumber).
func (g *Generator) eventNumber(pos int64) int64 {
	num := g.firstNum + pos
	if g.ooo > 1 {
		num = num/g.ooo*g.ooo + (num%g.ooo)*953%g.ooo
	}
	return num
}

// NextEventID returns the event id of the next event (the reference's
// getNextEventId). Everything in an event is derived from its event id.
func (g *Generator) NextEventID() int64 {
	return g.firstID + g.eventNumber(g.pos)
}

// TimestampForEvent returns the event time, in milliseconds since the Unix
// epoch, of the event with event number eventNumber:
// BaseTime + floor(eventNumber × interEventDelayUs) / 1000, where
// interEventDelayUs = 1e6 / FirstEventRate × NumEventGenerators.
func (g *Generator) TimestampForEvent(eventNumber int64) int64 {
	return g.cfg.BaseTime + int64(float64(eventNumber)*g.delayUs)/1000
}

// Watermark returns a lower bound, in milliseconds since the Unix epoch, of
// the event times of all events this part has not emitted yet: the event
// time of the first event number of the current out-of-order group, as the
// reference computes the watermark of its next event. With
// OutOfOrderGroupSize 1 it is the event time of the next event. (The
// reference DDL instead declares dateTime - INTERVAL '4' SECOND.)
func (g *Generator) Watermark() int64 {
	num := g.firstNum + g.pos
	return g.TimestampForEvent(num / g.ooo * g.ooo)
}

// fill generates the event at position pos of this part into e.
func (g *Generator) fill(e *Event, pos int64) {
	num := g.eventNumber(pos)
	id := g.firstID + num
	ts := g.TimestampForEvent(num)
	var epoch, off int64
	if g.total == 50 { // the default; a constant divisor is much cheaper
		epoch, off = id/50, id%50
	} else {
		epoch, off = id/g.total, id%g.total
	}
	switch {
	case off < g.pp:
		e.Type = PersonEvent
		if g.skip&(1<<PersonEvent) != 0 {
			e.Person.DateTime = ts
			return
		}
		g.person(&e.Person, id, epoch, off, ts)
	case off < g.pp+g.ap:
		e.Type = AuctionEvent
		if g.skip&(1<<AuctionEvent) != 0 {
			e.Auction.DateTime = ts
			return
		}
		g.auction(&e.Auction, id, epoch, off, ts, num)
	default:
		e.Type = BidEvent
		if g.skip&(1<<BidEvent) != 0 {
			e.Bid.DateTime = ts
			return
		}
		g.bid(&e.Bid, id, epoch, ts)
	}
}

// The per-type generators below keep the event's random stream in a local
// variable and only pass it to inlined helpers, so that it stays in registers.

// lastPerson returns the last base-0 person id generated before a non-person
// event of the given epoch (the reference's lastBase0PersonId).
func (g *Generator) lastPerson(epoch int64) int64 {
	return epoch*g.pp + g.pp - 1
}

// activePeople returns the range a random base-0 person id is drawn from:
// lo + [0, n), the active people plus a few not created yet (the reference's
// nextBase0PersonId).
func (g *Generator) activeRange(epoch int64) (lo int64, n uint64) {
	numPeople := g.lastPerson(epoch) + 1
	active := min(numPeople, g.activePeople)
	return numPeople - active, uint64(active + personIDLead)
}

// person generates a Person (PersonGenerator.nextPerson).
func (g *Generator) person(p *Person, id, epoch, off, ts int64) {
	r := eventRand(id)
	p.ID = epoch*g.pp + off + FirstPersonID
	p.Name = g.t.fullNames[r.intn(uint64(len(firstNames)))*uint64(len(lastNames))+r.intn(uint64(len(lastNames)))]
	p.EmailAddress = g.email(&r)
	p.CreditCard = g.creditCard(&r)
	p.City = usCities[r.intn(uint64(len(usCities)))]
	p.State = usStates[r.intn(uint64(len(usStates)))]
	p.DateTime = ts
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State)
	p.Extra = g.extra(&r, size, g.cfg.AvgPersonByteSize)
}

// email returns nextString(7) + "@" + nextString(5) + ".com".
func (g *Generator) email(r *splitmix) string {
	user := g.nextString(r, 7)
	domain := g.nextString(r, 5)
	b := g.arena.alloc(len(user) + 1 + len(domain) + 4)
	n := copy(b, user)
	b[n] = '@'
	n++
	n += copy(b[n:], domain)
	copy(b[n:], ".com")
	return bytesToString(b)
}

// creditCard returns four random groups of four digits separated by spaces.
func (g *Generator) creditCard(r *splitmix) string {
	b := g.arena.alloc(19)
	for i := 0; i < 4; i++ {
		v := r.intn(10000)
		o := i * 5
		b[o] = byte('0' + v/1000)
		b[o+1] = byte('0' + v/100%10)
		b[o+2] = byte('0' + v/10%10)
		b[o+3] = byte('0' + v%10)
		if i < 3 {
			b[o+4] = ' '
		}
	}
	return bytesToString(b)
}

// auctionFixedSize is what the reference counts for an auction besides its
// item name, description and padding.
const auctionFixedSize = 8 + 8 + 8 + 8 + 8 + 8

// auction generates an Auction (AuctionGenerator.nextAuction).
func (g *Generator) auction(a *Auction, id, epoch, off, ts, num int64) {
	r := eventRand(id)
	a.ID = epoch*g.ap + (off - g.pp) + FirstAuctionID
	if r.intn(g.hotSellersRatio) > 0 {
		a.Seller = g.lastPerson(epoch)/hotSellerBatch*hotSellerBatch + FirstPersonID
	} else {
		lo, n := g.activeRange(epoch)
		a.Seller = lo + int64(r.intn(n)) + FirstPersonID
	}
	a.Category = FirstCategoryID + int64(r.intn(NumCategories))
	a.InitialBid = g.price(r.next())
	// The auction lasts on average as long as it takes to generate the next
	// NumInFlightAuctions auctions. The bound depends on the timeline, so it
	// gets a draw of its own: parallel parts then differ only in times.
	horizon := g.TimestampForEvent(num+g.auctionSpan) - ts
	a.Expires = ts + 1 + int64(r.fresh(uint64(max(horizon*2, 1))))
	a.ItemName = g.nextString(&r, 20)
	a.Description = g.nextString(&r, 100)
	a.Reserve = a.InitialBid + g.price(r.next())
	a.DateTime = ts
	size := auctionFixedSize + len(a.ItemName) + len(a.Description)
	a.Extra = g.extra(&r, size, g.cfg.AvgAuctionByteSize)
}

// bidFixedSize is what the reference counts for a bid besides its padding.
const bidFixedSize = 8 + 8 + 8 + 8

// bid generates a Bid (BidGenerator.nextBid).
func (g *Generator) bid(b *Bid, id, epoch, ts int64) {
	r := eventRand(id)
	lastAuction := epoch*g.ap + g.ap - 1
	if r.intn(g.hotAuctionRatio) > 0 {
		b.Auction = lastAuction/hotAuctionBatch*hotAuctionBatch + FirstAuctionID
	} else {
		lo := max(lastAuction-g.inFlight, 0)
		b.Auction = lo + int64(r.intn(uint64(lastAuction-lo+1+auctionIDLead))) + FirstAuctionID
	}

	if r.intn(g.hotBiddersRatio) > 0 {
		b.Bidder = g.lastPerson(epoch)/hotBidderBatch*hotBidderBatch + 1 + g.bidderOffset
	} else {
		lo, n := g.activeRange(epoch)
		b.Bidder = lo + int64(r.intn(n)) + g.bidderOffset
	}

	b.Price = g.price(r.next())
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(uint64(len(hotChannels)))
		b.Channel, b.URL = hotChannels[i], g.t.hotURLs[i]
	} else {
		c := &g.t.channels[r.intn(channelsNumber)]
		b.Channel, b.URL = c.name, c.url
	}
	b.DateTime = ts

	n := g.bidExtraMin
	if g.bidExtraSpan > 0 {
		n += int(r.intn(g.bidExtraSpan))
	}
	if pool := g.t.extraPool; n < len(pool)/2 {
		off := r.intn(uint64(len(pool) - n))
		b.Extra = pool[off : off+uint64(n)]
	} else {
		b.Extra = g.longPadding(r.next(), n)
	}
}

// price returns round(10^(6u) · 100) for u uniform in [0, 1) taken from the
// 53 high bits of bits64: a log-uniform price in cents from 100 to 10^8 (the
// reference's PriceGenerator). The power is the product of two table entries,
// for the leading 2·priceTableBits bits of u, and a second-order Taylor term
// for the rest; it is within 1e-15 relative of math.Pow and several times
// faster.
func (g *Generator) price(bits64 uint64) int64 {
	const restBits = 53 - 2*priceTableBits
	u := bits64 >> 11
	t := float64(u&(1<<restBits-1)) * (0x1p-53 * 6 * math.Ln10)
	hi := g.t.priceHi[u>>(53-priceTableBits)]
	lo := g.t.priceLo[u>>restBits&(1<<priceTableBits-1)]
	return int64(hi*lo*(1+t*(1+t*0.5)) + 0.5)
}

// nextString returns a random string of minStringLength to maxLength-1
// characters, a space one time in 13, trimmed (the reference's nextString).
func (g *Generator) nextString(r *splitmix, maxLength int) string {
	n := minStringLength + int(r.intn(uint64(maxLength-minStringLength)))
	off := r.intn(uint64(len(g.t.textPool) - n))
	return trimSpaces(g.t.textPool[off : off+uint64(n)])
}

// extraRange returns the padding length range of the reference's nextExtra
// for a record of currentSize aiming at desiredAverage: lengths are
// lo + [0, span).
func extraRange(currentSize, desiredAverage int) (lo int, span uint64) {
	if currentSize > desiredAverage {
		return 0, 0
	}
	d := desiredAverage - currentSize
	delta := int(math.Floor(float64(d)*0.2 + 0.5)) // Java Math.round
	return d - delta, uint64(2 * delta)
}

// extra returns padding for a record of currentSize (the reference's
// nextExtra): n characters sliced from the shared reusable string.
func (g *Generator) extra(r *splitmix, currentSize, desiredAverage int) string {
	n, span := extraRange(currentSize, desiredAverage)
	if span > 0 {
		n += int(r.intn(span))
	}
	if n <= 0 {
		return ""
	}
	if pool := g.t.extraPool; n < len(pool)/2 {
		off := r.intn(uint64(len(pool) - n))
		return pool[off : off+uint64(n)]
	}
	return g.longPadding(r.next(), n)
}

// longPadding returns n characters of fresh padding, for sizes too large to
// slice from the shared string (the reference generates those too).
func (g *Generator) longPadding(seed uint64, n int) string {
	r := splitmix{s: seed}
	b := make([]byte, n)
	fillExact(&r, b)
	return string(b)
}
