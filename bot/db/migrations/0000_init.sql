CREATE TABLE `file_jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`update_id` integer NOT NULL,
	`chat_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`message_id` integer NOT NULL,
	`source` text NOT NULL,
	`file_id` text NOT NULL,
	`file_unique_id` text NOT NULL,
	`declared_name` text,
	`declared_mime` text,
	`declared_size` integer,
	`language_code` text,
	`status` text NOT NULL,
	`local_path` text,
	`sha256` text,
	`real_size` integer,
	`lease_until` text,
	`lease_owner` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`reserved_bytes` integer DEFAULT 0 NOT NULL,
	`detected_type` text,
	`facts` text,
	`reason` text,
	`reason_params` text,
	`last_error` text,
	`status_message_id` integer,
	`not_before` text,
	`result_expires_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`updated_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')) NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `file_jobs_chat_file_unique` ON `file_jobs` (`chat_id`,`file_unique_id`);--> statement-breakpoint
CREATE INDEX `file_jobs_status_lease` ON `file_jobs` (`status`,`lease_until`);--> statement-breakpoint
CREATE INDEX `file_jobs_chat_id` ON `file_jobs` (`chat_id`,`id`);--> statement-breakpoint
CREATE INDEX `file_jobs_expires` ON `file_jobs` (`status`,`result_expires_at`);--> statement-breakpoint
CREATE INDEX `file_jobs_sha` ON `file_jobs` (`chat_id`,`sha256`);--> statement-breakpoint
CREATE TABLE `job_results` (
	`job_id` integer NOT NULL,
	`idx` integer NOT NULL,
	`path` text NOT NULL,
	`file_name` text NOT NULL,
	`mime` text NOT NULL,
	`size` integer NOT NULL,
	`telegram_file_id` text,
	PRIMARY KEY(`job_id`, `idx`),
	FOREIGN KEY (`job_id`) REFERENCES `file_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
