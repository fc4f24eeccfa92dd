CREATE TABLE `ops_alerts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`cause` text NOT NULL,
	`text` text NOT NULL,
	`source` text NOT NULL,
	`state` text DEFAULT 'pending' NOT NULL,
	`detail` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`claimed_at` text,
	`settled_at` text
);
--> statement-breakpoint
CREATE INDEX `ops_alerts_state_id` ON `ops_alerts` (`state`,`id`);--> statement-breakpoint
CREATE INDEX `ops_alerts_created` ON `ops_alerts` (`created_at`);