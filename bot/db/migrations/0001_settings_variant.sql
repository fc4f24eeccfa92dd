CREATE TABLE `chat_settings` (
	`chat_id` integer PRIMARY KEY NOT NULL,
	`pdf_action` text DEFAULT 'default' NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL
);
--> statement-breakpoint
DROP INDEX `file_jobs_chat_file_unique`;--> statement-breakpoint
ALTER TABLE `file_jobs` ADD `variant` text DEFAULT 'default' NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `file_jobs_chat_file_variant_unique` ON `file_jobs` (`chat_id`,`file_unique_id`,`variant`);