-- Bids per auction in tumbling windows of 10 seconds, over eddy's built-in
-- Nexmark generator, printed as a changelog.
--
--   eddy run examples/sql/bids_per_auction.sql

CREATE TABLE events (
    event_type INT,
    bid ROW<auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
            `dateTime` TIMESTAMP(3), extra VARCHAR>,
    `dateTime` AS bid.`dateTime`,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'events.num' = '200000',
    'first-event.rate' = '10000',
    'next-event.rate' = '10000'
);

CREATE VIEW bids AS
SELECT bid.auction AS auction, bid.price AS price, `dateTime`
FROM events
WHERE event_type = 2;

CREATE TABLE busy_auctions (
    auction BIGINT,
    window_start TIMESTAMP(3),
    bids BIGINT,
    top_price BIGINT
) WITH ('connector' = 'print');

INSERT INTO busy_auctions
SELECT auction, window_start, COUNT(*) AS bids, MAX(price) AS top_price
FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(`dateTime`), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end
HAVING COUNT(*) >= 20;
