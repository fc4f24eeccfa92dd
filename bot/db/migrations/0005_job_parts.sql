CREATE TABLE `chat_prompts` (
	`chat_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`job_id` integer NOT NULL,
	`action` text NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`chat_id`, `user_id`),
	FOREIGN KEY (`job_id`) REFERENCES `file_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `job_parts` (
	`job_id` integer NOT NULL,
	`message_id` integer NOT NULL,
	`update_id` integer NOT NULL,
	`source` text NOT NULL,
	`file_id` text NOT NULL,
	`file_unique_id` text NOT NULL,
	`declared_name` text,
	`declared_mime` text,
	`declared_size` integer,
	`status` text NOT NULL,
	`local_path` text,
	`sha256` text,
	`real_size` integer,
	`reason` text,
	`reason_params` text,
	`last_error` text,
	PRIMARY KEY(`job_id`, `message_id`),
	FOREIGN KEY (`job_id`) REFERENCES `file_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `job_parts_update_unique` ON `job_parts` (`update_id`);